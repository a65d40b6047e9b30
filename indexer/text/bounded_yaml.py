"""YAML read with a bound on what aliases may expand to: a few hundred bytes must not become gigabytes.

PyYAML builds an alias as a second reference to the same object, so loading a "billion laughs" block is cheap;
the cost comes later, when the value is walked or written out as JSON, every reference expanded. Counting the
nodes of the composed document with every alias followed, and stopping at a bound, refuses it up front.
"""
from __future__ import annotations

import yaml

MAX_NODES = 20_000  # scalars, lists and mappings, every alias expanded; real frontmatter has tens


class TooManyNodes(yaml.YAMLError):
    """The document expands (through its aliases) to more nodes than MAX_NODES."""

    def __init__(self, limit: int):
        super().__init__(f"it expands to more than {limit:,} values (through YAML aliases)")
        self.problem = str(self)


def safe_load(text: str, max_nodes: int = MAX_NODES):
    """Load one YAML document with the safe loader, refusing one that expands past max_nodes."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        check_size(node, max_nodes)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def check_size(root: yaml.Node, max_nodes: int) -> None:
    """Raise TooManyNodes when the node, with every alias followed, has more than max_nodes nodes."""
    stack, seen = [root], 0
    while stack:
        node = stack.pop()
        seen += 1
        if seen > max_nodes:
            raise TooManyNodes(max_nodes)
        if isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.extend((key, value))
