"""The Forge Graph of Cluster View: documents as nodes, links and semantic neighbours as edges, clusters."""
from .build import build_graph
from .graphs import ForgeGraphs, highlight

__all__ = ["ForgeGraphs", "build_graph", "highlight"]
