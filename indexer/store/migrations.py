"""Numbered schema migrations for a project's index, applied in order when it opens."""
from __future__ import annotations

import sqlite3
from typing import Callable

MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = []


def migration(fn: Callable[[sqlite3.Connection], None]) -> Callable[[sqlite3.Connection], None]:
    """Register a migration; its position in this file is its number."""
    MIGRATIONS.append(fn)
    return fn


def migrate(conn: sqlite3.Connection) -> None:
    """Apply every migration this database has not seen yet, each in its own transaction."""
    conn.execute("CREATE TABLE IF NOT EXISTS _migrations (number INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                 "applied_at TEXT NOT NULL)")
    done = {row[0] for row in conn.execute("SELECT number FROM _migrations")}
    for number, fn in enumerate(MIGRATIONS, start=1):
        if number in done:
            continue
        with conn:
            fn(conn)
            conn.execute(
                "INSERT INTO _migrations (number, name, applied_at) VALUES (?, ?, datetime('now'))",
                (number, fn.__name__),
            )


def behind(conn: sqlite3.Connection) -> int:
    """How many migrations this database has not seen (a read-only connection can only ask)."""
    try:
        done = {row[0] for row in conn.execute("SELECT number FROM _migrations")}
    except sqlite3.OperationalError:  # not even the first
        return len(MIGRATIONS)
    return sum(number not in done for number in range(1, len(MIGRATIONS) + 1))


@migration
def m001_documents_chunks_tags_links(conn: sqlite3.Connection) -> None:
    conn.executescript(
        """
        CREATE TABLE documents (
            document_id TEXT PRIMARY KEY,
            rel_path TEXT NOT NULL UNIQUE,
            file_type TEXT NOT NULL,
            title TEXT NOT NULL,
            frontmatter TEXT NOT NULL DEFAULT '{}',
            frontmatter_type TEXT,
            created TEXT,
            modified REAL NOT NULL,
            size INTEGER NOT NULL,
            content_hash TEXT NOT NULL,
            mtime_ns INTEGER NOT NULL,
            warnings TEXT NOT NULL DEFAULT '[]',
            indexed_at TEXT NOT NULL DEFAULT (datetime('now'))
        );
        CREATE INDEX documents_hash ON documents(content_hash);
        CREATE INDEX documents_modified ON documents(modified);

        CREATE TABLE chunks (
            chunk_id TEXT PRIMARY KEY,
            document_id TEXT NOT NULL REFERENCES documents(document_id) ON DELETE CASCADE,
            ordinal INTEGER NOT NULL,
            heading_path TEXT NOT NULL DEFAULT '[]',
            content TEXT NOT NULL,
            embed_text TEXT NOT NULL,
            start_line INTEGER NOT NULL,
            end_line INTEGER NOT NULL,
            content_hash TEXT NOT NULL,
            embed_state TEXT NOT NULL DEFAULT 'pending' CHECK (embed_state IN ('pending', 'embedded', 'failed')),
            embed_error TEXT
        );
        CREATE INDEX chunks_document ON chunks(document_id, ordinal);
        CREATE INDEX chunks_state ON chunks(embed_state);

        CREATE TABLE tags (
            document_id TEXT NOT NULL REFERENCES documents(document_id) ON DELETE CASCADE,
            tag TEXT NOT NULL,
            PRIMARY KEY (document_id, tag)
        );
        CREATE INDEX tags_tag ON tags(tag);

        CREATE TABLE links (
            document_id TEXT NOT NULL REFERENCES documents(document_id) ON DELETE CASCADE,
            target TEXT NOT NULL,
            kind TEXT NOT NULL,
            PRIMARY KEY (document_id, target, kind)
        );
        CREATE INDEX links_target ON links(target);

        -- Files that could not be indexed at all (unreadable, binary, too big): what the user sees in status.
        CREATE TABLE file_errors (
            rel_path TEXT PRIMARY KEY,
            error TEXT NOT NULL,
            at TEXT NOT NULL DEFAULT (datetime('now'))
        );
        """
    )


@migration
def m002_full_text_indexes(conn: sqlite3.Connection) -> None:
    # Trigram: case-insensitive substring search over chunk text and over document titles and paths.
    # Porter: BM25 ranking with stemming. Both are external-content tables kept current by triggers.
    conn.executescript(
        """
        CREATE VIRTUAL TABLE chunks_trigram USING fts5(content, content='chunks', content_rowid='rowid',
            tokenize='trigram');
        CREATE VIRTUAL TABLE chunks_porter USING fts5(heading_path, content, content='chunks', content_rowid='rowid',
            tokenize='porter unicode61 remove_diacritics 2');
        CREATE VIRTUAL TABLE documents_trigram USING fts5(title, rel_path, content='documents', content_rowid='rowid',
            tokenize='trigram');

        CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
            INSERT INTO chunks_trigram(rowid, content) VALUES (new.rowid, new.content);
            INSERT INTO chunks_porter(rowid, heading_path, content) VALUES (new.rowid, new.heading_path, new.content);
        END;
        CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
            INSERT INTO chunks_trigram(chunks_trigram, rowid, content) VALUES ('delete', old.rowid, old.content);
            INSERT INTO chunks_porter(chunks_porter, rowid, heading_path, content)
                VALUES ('delete', old.rowid, old.heading_path, old.content);
        END;
        CREATE TRIGGER chunks_au AFTER UPDATE OF content, heading_path ON chunks BEGIN
            INSERT INTO chunks_trigram(chunks_trigram, rowid, content) VALUES ('delete', old.rowid, old.content);
            INSERT INTO chunks_trigram(rowid, content) VALUES (new.rowid, new.content);
            INSERT INTO chunks_porter(chunks_porter, rowid, heading_path, content)
                VALUES ('delete', old.rowid, old.heading_path, old.content);
            INSERT INTO chunks_porter(rowid, heading_path, content) VALUES (new.rowid, new.heading_path, new.content);
        END;

        CREATE TRIGGER documents_ai AFTER INSERT ON documents BEGIN
            INSERT INTO documents_trigram(rowid, title, rel_path) VALUES (new.rowid, new.title, new.rel_path);
        END;
        CREATE TRIGGER documents_ad AFTER DELETE ON documents BEGIN
            INSERT INTO documents_trigram(documents_trigram, rowid, title, rel_path)
                VALUES ('delete', old.rowid, old.title, old.rel_path);
        END;
        CREATE TRIGGER documents_au AFTER UPDATE OF title, rel_path ON documents BEGIN
            INSERT INTO documents_trigram(documents_trigram, rowid, title, rel_path)
                VALUES ('delete', old.rowid, old.title, old.rel_path);
            INSERT INTO documents_trigram(rowid, title, rel_path) VALUES (new.rowid, new.title, new.rel_path);
        END;
        """
    )


@migration
def m003_chunk_vectors(conn: sqlite3.Connection) -> None:
    # A float32 copy of each embedded chunk's vector, written in the same transaction as its embed_state:
    # the in-memory search cache loads from here in a fraction of the time a Chroma `get` takes.
    conn.execute("ALTER TABLE chunks ADD COLUMN vector BLOB")


# Keep chunks_bm25 beside the chunks: m004 created these triggers, m008 re-creates them on its rebuilt table.
BM25_TRIGGERS = """
        CREATE TRIGGER chunks_bm25_ai AFTER INSERT ON chunks BEGIN
            INSERT INTO chunks_bm25(rowid, title, heading_path, content)
                VALUES (new.rowid, (SELECT title FROM documents WHERE document_id = new.document_id),
                        new.heading_path, new.content);
        END;
        CREATE TRIGGER chunks_bm25_ad AFTER DELETE ON chunks BEGIN
            DELETE FROM chunks_bm25 WHERE rowid = old.rowid;
        END;
        CREATE TRIGGER chunks_bm25_au AFTER UPDATE OF content, heading_path ON chunks BEGIN
            UPDATE chunks_bm25 SET heading_path = new.heading_path, content = new.content WHERE rowid = old.rowid;
        END;
        CREATE TRIGGER documents_bm25_au AFTER UPDATE OF title ON documents WHEN old.title IS NOT new.title BEGIN
            UPDATE chunks_bm25 SET title = new.title
                WHERE rowid IN (SELECT rowid FROM chunks WHERE document_id = new.document_id);
        END;
"""


@migration
def m004_bm25_with_titles(conn: sqlite3.Connection) -> None:
    # vault_search ranks notes by BM25 over each chunk's text together with its note's title, so that a query
    # whose words are split between title and body still matches (implicit AND). The table keeps its own copy
    # of the text: deleting by rowid then works even when a chunk goes with its document (a cascade), when the
    # title it was indexed with can no longer be looked up.
    conn.executescript(
        """
        CREATE VIRTUAL TABLE chunks_bm25 USING fts5(title, heading_path, content,
            tokenize='porter unicode61 remove_diacritics 2');
        INSERT INTO chunks_bm25(rowid, title, heading_path, content)
            SELECT c.rowid, d.title, c.heading_path, c.content FROM chunks c JOIN documents d USING (document_id);
        """
        + BM25_TRIGGERS
    )


@migration
def m005_chunk_refs(conn: sqlite3.Connection) -> None:
    # What a chunk stands for inside its document, as JSON: for a mind map, the node it was cut from (id, parent,
    # path, level, tags, relationships, the map revision indexed). Sub-chunks of one node carry the same ref. It is
    # not part of the chunk id, so a new revision refreshes the refs without re-embedding unchanged nodes.
    conn.execute("ALTER TABLE chunks ADD COLUMN ref TEXT")


@migration
def m006_graph_positions(conn: sqlite3.Connection) -> None:
    # Where each document sits on the Cluster View's Forge Graph, kept so that the picture a user has learnt
    # survives edits: laid out once, then documents that appear are placed beside a neighbour and the rest stay.
    # `placed` says how (see indexer/graph/layout.py). Rows go with their document.
    conn.execute(
        """CREATE TABLE graph_positions (
            document_id TEXT PRIMARY KEY REFERENCES documents(document_id) ON DELETE CASCADE,
            x REAL NOT NULL,
            y REAL NOT NULL,
            placed TEXT NOT NULL
        )"""
    )


@migration
def m007_packed_chunks_and_fingerprint(conn: sqlite3.Connection) -> None:
    # A packed chunk spans sections: `sections` holds each one's heading path, lines and offset in the content
    # (JSON; NULL for chunks cut before packing, which span one section). `index_meta` records how the index was
    # built (chunker version, embedding model and backend), so that a change re-chunks or re-embeds at start-up.
    # Vectors are reused by the hash of the text they embed, hence the index on content_hash. A note with no words
    # for the model (a template of headings, a page that only embeds a base) has one keyword_only chunk: found by
    # keyword search on its title, path and text, never embedded (its state is 'embedded': nothing left to do).
    conn.execute("ALTER TABLE chunks ADD COLUMN sections TEXT")
    conn.execute("ALTER TABLE chunks ADD COLUMN keyword_only INTEGER NOT NULL DEFAULT 0")
    conn.execute("CREATE TABLE index_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute("CREATE INDEX chunks_content_hash ON chunks(content_hash)")


# A note's frontmatter (or Logseq page properties) as words for BM25: its string and number values, arrays
# included, keys left out. Bound to one JSON document (`?`); used by the migration below and by save_document.
PROPERTY_TEXT = "(SELECT group_concat(value, ' ') FROM json_tree(?) WHERE type IN ('text', 'integer', 'real'))"


@migration
def m008_bm25_with_properties(conn: sqlite3.Connection) -> None:
    # vault_search's BM25 leg also reads the note's properties (a `description::`, an `id:`, an author), which the
    # chunk text does not hold: they sit in a fourth column of each note's first chunk. The table is rebuilt with
    # that column; its triggers stay as they were, and save_document fills the column for the first chunk.
    conn.executescript(
        """
        DROP TRIGGER IF EXISTS chunks_bm25_ai;
        DROP TRIGGER IF EXISTS chunks_bm25_ad;
        DROP TRIGGER IF EXISTS chunks_bm25_au;
        DROP TRIGGER IF EXISTS documents_bm25_au;
        DROP TABLE IF EXISTS chunks_bm25;
        CREATE VIRTUAL TABLE chunks_bm25 USING fts5(title, heading_path, content, properties,
                                                    tokenize='porter unicode61 remove_diacritics 2');
        """
        + BM25_TRIGGERS
    )
    conn.execute(
        f"""INSERT INTO chunks_bm25(rowid, title, heading_path, content, properties)
            SELECT c.rowid, d.title, c.heading_path, c.content,
                   CASE WHEN c.ordinal = (SELECT min(ordinal) FROM chunks WHERE document_id = c.document_id)
                        THEN {PROPERTY_TEXT.replace('?', 'd.frontmatter')} END
            FROM chunks c JOIN documents d USING (document_id)"""
    )


@migration
def m009_vector_generation(conn: sqlite3.Connection) -> None:
    # The vector cache keeps its rows in files beside the database (search/vector_rows.py), valid only while they
    # hold exactly the vectors the database holds. `vector_generation` moves with every change to which chunks
    # have a vector, whoever makes it (the server, `skmemory index`, a repair), in the same transaction; the files
    # record the generation they match when they are closed, and are rebuilt when the two differ.
    conn.executescript(
        """
        INSERT OR IGNORE INTO index_meta (key, value) VALUES ('vector_generation', '0');
        CREATE TRIGGER chunks_vector_au AFTER UPDATE OF vector, embed_state, keyword_only ON chunks
        WHEN old.vector IS NOT new.vector OR old.embed_state IS NOT new.embed_state
             OR old.keyword_only IS NOT new.keyword_only
        BEGIN
            UPDATE index_meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vector_generation';
        END;
        CREATE TRIGGER chunks_vector_ad AFTER DELETE ON chunks WHEN old.vector IS NOT NULL
        BEGIN
            UPDATE index_meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vector_generation';
        END;
        """
    )


@migration
def m010_documents_newest_first(conn: sqlite3.Connection) -> None:
    # Keyword search ranks a common word's matches newest first; walking notes in this order lets it stop after the
    # first few instead of sorting every match (search/keyword.py).
    conn.execute("CREATE INDEX documents_newest ON documents(modified DESC, document_id)")


@migration
def m011_words(conn: sqlite3.Connection) -> None:
    # The words of every chunk and title as a person typed them (no stemming), for correcting a word that matches
    # nothing ("kanbn" -> "kanban") against the project's own vocabulary (search/spelling.py). Contentless and
    # without positions: only which words exist and in how many chunks (words_vocab). A chunk's rowid is 2n, a
    # document's 2n + 1.
    conn.executescript(
        """
        CREATE VIRTUAL TABLE words USING fts5(text, content='', detail='none',
            tokenize='unicode61 remove_diacritics 2');
        CREATE VIRTUAL TABLE words_vocab USING fts5vocab(words, 'row');
        CREATE TRIGGER words_chunks_ai AFTER INSERT ON chunks BEGIN
            INSERT INTO words(rowid, text) VALUES (new.rowid * 2, new.content);
        END;
        CREATE TRIGGER words_chunks_ad AFTER DELETE ON chunks BEGIN
            INSERT INTO words(words, rowid, text) VALUES ('delete', old.rowid * 2, old.content);
        END;
        CREATE TRIGGER words_chunks_au AFTER UPDATE OF content ON chunks BEGIN
            INSERT INTO words(words, rowid, text) VALUES ('delete', old.rowid * 2, old.content);
            INSERT INTO words(rowid, text) VALUES (new.rowid * 2, new.content);
        END;
        CREATE TRIGGER words_documents_ai AFTER INSERT ON documents BEGIN
            INSERT INTO words(rowid, text) VALUES (new.rowid * 2 + 1, new.title);
        END;
        CREATE TRIGGER words_documents_ad AFTER DELETE ON documents BEGIN
            INSERT INTO words(words, rowid, text) VALUES ('delete', old.rowid * 2 + 1, old.title);
        END;
        CREATE TRIGGER words_documents_au AFTER UPDATE OF title ON documents BEGIN
            INSERT INTO words(words, rowid, text) VALUES ('delete', old.rowid * 2 + 1, old.title);
            INSERT INTO words(rowid, text) VALUES (new.rowid * 2 + 1, new.title);
        END;
        INSERT INTO words(rowid, text) SELECT rowid * 2, content FROM chunks;
        INSERT INTO words(rowid, text) SELECT rowid * 2 + 1, title FROM documents;
        """
    )


@migration
def m012_failed_files_keep_their_id(conn: sqlite3.Connection) -> None:
    # A note caught half-written (an editor that truncates, then writes) fails to parse and leaves the index; when
    # it parses again it comes back under the id it had, which mind maps, the open map and agents hold on to.
    conn.execute("ALTER TABLE file_errors ADD COLUMN document_id TEXT")


@migration
def m013_no_porter_index(conn: sqlite3.Connection) -> None:
    # chunks_porter (m002) lost its last reader when chunks_bm25 (m004) took over BM25 ranking, yet every chunk
    # written was still tokenised into it: a quarter of a big sync's inserts made an index nothing searched.
    conn.executescript(
        """
        DROP TRIGGER IF EXISTS chunks_ai;
        DROP TRIGGER IF EXISTS chunks_ad;
        DROP TRIGGER IF EXISTS chunks_au;
        DROP TABLE IF EXISTS chunks_porter;
        CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
            INSERT INTO chunks_trigram(rowid, content) VALUES (new.rowid, new.content);
        END;
        CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
            INSERT INTO chunks_trigram(chunks_trigram, rowid, content) VALUES ('delete', old.rowid, old.content);
        END;
        CREATE TRIGGER chunks_au AFTER UPDATE OF content ON chunks BEGIN
            INSERT INTO chunks_trigram(chunks_trigram, rowid, content) VALUES ('delete', old.rowid, old.content);
            INSERT INTO chunks_trigram(rowid, content) VALUES (new.rowid, new.content);
        END;
        """
    )


@migration
def m014_shared_paragraphs(conn: sqlite3.Connection) -> None:
    # Which notes hold each paragraph (text/boilerplate.py): a footer that many notes share is never a note's
    # best passage. shared_paragraphs holds the keys SHARED_NOTES notes or more hold, kept by triggers as notes come
    # and go (a cascade from documents fires them too), so a search reads a few rows, never counts. Filled here from
    # the chunks already indexed; Database.save_document keeps paragraphs after.
    from ..text.boilerplate import SHARED_NOTES, paragraph_keys

    conn.executescript(
        f"""
        CREATE TABLE paragraphs (
            hash TEXT NOT NULL,
            document_id TEXT NOT NULL REFERENCES documents(document_id) ON DELETE CASCADE,
            PRIMARY KEY (hash, document_id)
        ) WITHOUT ROWID;
        CREATE INDEX paragraphs_document ON paragraphs(document_id);
        CREATE TABLE shared_paragraphs (hash TEXT PRIMARY KEY) WITHOUT ROWID;
        CREATE TRIGGER paragraphs_ai AFTER INSERT ON paragraphs BEGIN
            INSERT OR IGNORE INTO shared_paragraphs SELECT new.hash
            WHERE (SELECT count(*) FROM paragraphs WHERE hash = new.hash) >= {SHARED_NOTES};
        END;
        CREATE TRIGGER paragraphs_ad AFTER DELETE ON paragraphs BEGIN
            DELETE FROM shared_paragraphs WHERE hash = old.hash
            AND (SELECT count(*) FROM paragraphs WHERE hash = old.hash) < {SHARED_NOTES};
        END;
        """
    )
    rows = conn.execute("SELECT document_id, content FROM chunks ORDER BY document_id")
    conn.executemany("INSERT OR IGNORE INTO paragraphs (hash, document_id) VALUES (?, ?)",
                     ((key, doc) for doc, content in rows for key, _ in paragraph_keys(content)))


SUBSTRINGS_LIVE = 9223372036854775807  # trigram_state.upto when every chunk is in chunks_trigram as it is written


@migration
def m015_substring_index_can_catch_up(conn: sqlite3.Connection) -> None:
    # The trigram index was 60 % of a big sync's writes (britannica-10k: 5.0 of 8.6 s a thousand notes). A big sync
    # now leaves it behind (Store.defer_substrings) and it catches up in batches once the notes are in: chunks_trigram
    # holds exactly the chunks whose rowid <= trigram_state.upto, which is SUBSTRINGS_LIVE when it is whole. The
    # triggers keep that true as rows come and go (an FTS5 'delete' of a row it never held would corrupt it).
    conn.executescript(
        f"""
        CREATE TABLE trigram_state (id INTEGER PRIMARY KEY CHECK (id = 1), upto INTEGER NOT NULL);
        INSERT INTO trigram_state (id, upto) VALUES (1, {SUBSTRINGS_LIVE});
        DROP TRIGGER IF EXISTS chunks_ai;
        DROP TRIGGER IF EXISTS chunks_ad;
        DROP TRIGGER IF EXISTS chunks_au;
        CREATE TRIGGER chunks_ai AFTER INSERT ON chunks
        WHEN new.rowid <= (SELECT upto FROM trigram_state WHERE id = 1) BEGIN
            INSERT INTO chunks_trigram(rowid, content) VALUES (new.rowid, new.content);
        END;
        CREATE TRIGGER chunks_ad AFTER DELETE ON chunks
        WHEN old.rowid <= (SELECT upto FROM trigram_state WHERE id = 1) BEGIN
            INSERT INTO chunks_trigram(chunks_trigram, rowid, content) VALUES ('delete', old.rowid, old.content);
        END;
        CREATE TRIGGER chunks_au AFTER UPDATE OF content ON chunks
        WHEN old.rowid <= (SELECT upto FROM trigram_state WHERE id = 1) BEGIN
            INSERT INTO chunks_trigram(chunks_trigram, rowid, content) VALUES ('delete', old.rowid, old.content);
            INSERT INTO chunks_trigram(rowid, content) VALUES (new.rowid, new.content);
        END;
        """
    )


@migration
def m016_word_list_catches_up_with_substrings(conn: sqlite3.Connection) -> None:
    # The word list of typo correction (m011) was the last index a big sync wrote for every chunk that keyword search
    # does not need first: 2.2 to 4.5 s of 15 to 20 s for 3,000 britannica-10k notes. Its chunk rows now follow the
    # substring index: `words` holds exactly the chunks whose rowid <= trigram_state.upto (and every title), and
    # Store.catch_up_substrings adds both. A catch-up under way when this runs: its chunks leave the word list, to
    # come back with the substrings (an FTS5 'delete' of a row it never held would corrupt it).
    conn.executescript(
        """
        INSERT INTO words(words, rowid, text)
            SELECT 'delete', rowid * 2, content FROM chunks
            WHERE rowid > (SELECT upto FROM trigram_state WHERE id = 1);
        DROP TRIGGER IF EXISTS words_chunks_ai;
        DROP TRIGGER IF EXISTS words_chunks_ad;
        DROP TRIGGER IF EXISTS words_chunks_au;
        CREATE TRIGGER words_chunks_ai AFTER INSERT ON chunks
        WHEN new.rowid <= (SELECT upto FROM trigram_state WHERE id = 1) BEGIN
            INSERT INTO words(rowid, text) VALUES (new.rowid * 2, new.content);
        END;
        CREATE TRIGGER words_chunks_ad AFTER DELETE ON chunks
        WHEN old.rowid <= (SELECT upto FROM trigram_state WHERE id = 1) BEGIN
            INSERT INTO words(words, rowid, text) VALUES ('delete', old.rowid * 2, old.content);
        END;
        CREATE TRIGGER words_chunks_au AFTER UPDATE OF content ON chunks
        WHEN old.rowid <= (SELECT upto FROM trigram_state WHERE id = 1) BEGIN
            INSERT INTO words(words, rowid, text) VALUES ('delete', old.rowid * 2, old.content);
            INSERT INTO words(rowid, text) VALUES (new.rowid * 2, new.content);
        END;
        """
    )


@migration
def m017_paragraphs_keyed_as_read(conn: sqlite3.Connection) -> None:
    # Paragraphs are now keyed with their links, URLs, HTML and comments masked (text/boilerplate.py): a published
    # vault's footer held each note's own path in its links, so no two footers were the same text and none was ever
    # boilerplate (6,556 of 6,591 notes carried it). Keyed again from the chunks; the triggers keep the shared ones.
    from ..text.boilerplate import paragraph_keys

    conn.execute("DELETE FROM paragraphs")
    rows = conn.execute("SELECT document_id, content FROM chunks ORDER BY document_id")
    conn.executemany("INSERT OR IGNORE INTO paragraphs (hash, document_id) VALUES (?, ?)",
                     ((key, doc) for doc, content in rows for key, _ in paragraph_keys(content)))


# The BM25 table's words in every script (text/segment.py): each text reaches it through skm_words, the SQL
# function every connection registers (store/database.py).
BM25_WORD_TRIGGERS = """
        CREATE TRIGGER chunks_bm25_ai AFTER INSERT ON chunks BEGIN
            INSERT INTO chunks_bm25(rowid, title, heading_path, content)
                VALUES (new.rowid, skm_words((SELECT title FROM documents WHERE document_id = new.document_id)),
                        skm_words(new.heading_path), skm_words(new.content));
        END;
        CREATE TRIGGER chunks_bm25_ad AFTER DELETE ON chunks BEGIN
            DELETE FROM chunks_bm25 WHERE rowid = old.rowid;
        END;
        CREATE TRIGGER chunks_bm25_au AFTER UPDATE OF content, heading_path ON chunks BEGIN
            UPDATE chunks_bm25 SET heading_path = skm_words(new.heading_path), content = skm_words(new.content)
                WHERE rowid = old.rowid;
        END;
        CREATE TRIGGER documents_bm25_au AFTER UPDATE OF title ON documents WHEN old.title IS NOT new.title BEGIN
            UPDATE chunks_bm25 SET title = skm_words(new.title)
                WHERE rowid IN (SELECT rowid FROM chunks WHERE document_id = new.document_id);
        END;
"""


@migration
def m018_words_in_every_script(conn: sqlite3.Connection) -> None:
    # unicode61 made an unspaced Chinese or Japanese sentence one token and porter stems English only: the BM25
    # table now receives CJK runs as character pairs and a stemmed language's words with their stems
    # (text/segment.py). The triggers pass every text through skm_words; the rows whose text that changes (none
    # in an English index: an ASCII passage of English is its own) are written again.
    conn.executescript(
        """
        DROP TRIGGER IF EXISTS chunks_bm25_ai;
        DROP TRIGGER IF EXISTS chunks_bm25_ad;
        DROP TRIGGER IF EXISTS chunks_bm25_au;
        DROP TRIGGER IF EXISTS documents_bm25_au;
        """
        + BM25_WORD_TRIGGERS
    )
    from ..text.segment import index_words

    rows = conn.execute("SELECT rowid, title, heading_path, content, properties FROM chunks_bm25").fetchall()
    changed = [(*(index_words(v) for v in row[1:]), row[0]) for row in rows
               if any(index_words(v) != v for v in row[1:])]
    conn.executemany("UPDATE chunks_bm25 SET title = ?, heading_path = ?, content = ?, properties = ? WHERE rowid = ?",
                     changed)


@migration
def m019_old_vectors_answer_meanwhile(conn: sqlite3.Connection) -> None:
    # A new embedding backend of the same model (onnx-int8 to openvino-int8, say) embeds every passage again; until
    # a passage's new vector is stored, its old one (same model, cosine ~0.99 to the new) answers meaning search, so
    # that search never goes blind during the re-embedding. A passage's old vector goes when its new one comes, or
    # with the passage.
    conn.executescript(
        """
        CREATE TABLE stale_vectors (chunk_id TEXT PRIMARY KEY, vector BLOB NOT NULL);
        CREATE TRIGGER chunks_stale_ad AFTER DELETE ON chunks
        BEGIN
            DELETE FROM stale_vectors WHERE chunk_id = old.chunk_id;
        END;
        CREATE TRIGGER chunks_stale_au AFTER UPDATE OF vector ON chunks WHEN new.vector IS NOT NULL
        BEGIN
            DELETE FROM stale_vectors WHERE chunk_id = new.chunk_id;
        END;
        CREATE TRIGGER stale_vectors_ad AFTER DELETE ON stale_vectors
        BEGIN
            UPDATE index_meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vector_generation';
        END;
        """
    )


@migration
def m020_vectors_across_languages(conn: sqlite3.Connection) -> None:
    # A question in another language than the notes is searched by a model that reads both (store/across.py): each
    # passage's language, and for a project the English model embeds, its vector by the multilingual model (NULL
    # where the project's own vectors are the multilingual model's already). A row goes with its passage.
    conn.executescript(
        """
        CREATE TABLE across_vectors (chunk_id TEXT PRIMARY KEY, language TEXT, vector BLOB);
        CREATE TRIGGER chunks_across_ad AFTER DELETE ON chunks
        BEGIN
            DELETE FROM across_vectors WHERE chunk_id = old.chunk_id;
        END;
        """
    )


@migration
def m021_previous_model_answers_meanwhile(conn: sqlite3.Connection) -> None:
    # A project moving to another model (its notes' language changed, or SKMEMORY_EMBED_MODEL did) embeds every
    # passage again, for minutes. Until the last one is done, meaning search reads the previous model's vectors, kept
    # here, with that model's own query encoder (search/switching.py): it answered nothing for those minutes. A row
    # goes with its passage; every row goes when the switch is done.
    conn.executescript(
        """
        CREATE TABLE previous_vectors (chunk_id TEXT PRIMARY KEY, vector BLOB NOT NULL);
        CREATE TRIGGER chunks_previous_ad AFTER DELETE ON chunks
        BEGIN
            DELETE FROM previous_vectors WHERE chunk_id = old.chunk_id;
        END;
        """
    )
