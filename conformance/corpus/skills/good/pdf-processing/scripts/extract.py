print("extracted")
