"""The tool module the plugin's pytester runs and early sessions write as ``mytools.py``."""

TOOLS_MODULE = """
from toolnexus_ref import BaseTool


class Add(BaseTool):
    name = "add"
    description = "Add two integers and return the sum."
    input_schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
        "additionalProperties": False,
    }

    def run(self, args, ctx):
        return args["a"] + args["b"]


class Echo(BaseTool):
    name = "echo"
    description = "Return the text unchanged."
    input_schema = {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
        "additionalProperties": False,
    }

    async def run(self, args, ctx):
        return args["text"]


class Misnamed(BaseTool):
    name = "bad tool"
    description = "A name with a space in it."
    input_schema = {"type": "object", "properties": {}, "additionalProperties": False}

    def run(self, args, ctx):
        return "ok"


good = [Add(), Echo()]
mixed = [Add(), Misnamed()]


def factory():
    return [Echo()]


async def async_factory():
    return [Add()]


def broken_factory():
    raise RuntimeError("the factory is broken")
"""
