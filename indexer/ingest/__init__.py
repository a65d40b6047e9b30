"""Files in, index rows out: walking a folder, reading each file (extract/), chunking, the pipeline that stores and
embeds them, the watcher that keeps a project current. The text analysis it shares with the questions is text/, the
models model/."""
