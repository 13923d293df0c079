"""The checks, one module per category family; importing a module registers its checks."""
