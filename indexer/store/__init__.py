"""Where a project's index lives: its SQLite file (database, migrations), its ChromaDB vectors, the writer's lock,
the writer (`Project`) and the read-only view a one-off search opens (`ProjectReader`)."""
