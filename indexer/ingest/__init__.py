"""Files in, index rows out: walking a folder, reading each file (extract/), chunking, embedding, the watcher
that keeps a project current and the background indexer that runs it all for a server."""
