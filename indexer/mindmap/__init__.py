"""Mind maps: the `.mmdata` file format, its node-level semantic index, node search and node context.

format.py reads and writes map files; extract.py turns one into a `mindmap-semantic` document whose chunks follow
node boundaries; maps.py finds, saves and remembers the active map; nodes.py searches nodes and describes one.
The Engine's mindmap_* methods are the public API every surface calls.
"""
