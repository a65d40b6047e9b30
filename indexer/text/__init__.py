"""What the index and the questions share about text: how a note reads (readable), the text many notes share
(boilerplate), words and scripts (segment), languages (language), inline Markdown and frontmatter, and reading a
file safely inside its project (files). Imported by ingest/ (files in) and search/ (questions) alike; imports
neither."""
