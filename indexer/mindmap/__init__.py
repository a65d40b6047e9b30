"""Mind maps: the `.mmdata` file format, its node-level semantic index, node search and node context.

format.py reads and writes map files; extract.py turns one into a `mindmap-semantic` document whose chunks follow
node boundaries; maps.py finds, saves and remembers the active map; nodes.py searches nodes and describes one.
mindmaps.py's MindMaps is what every surface calls, as engine.mindmaps.
"""
