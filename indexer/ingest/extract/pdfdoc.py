"""PDF files: the text layer, one section per page."""
from __future__ import annotations

import io
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from indexer.errors import ExtractionError
from indexer.ingest.parsed import ParsedDocument, Section

if TYPE_CHECKING:
    from pypdf import PdfReader

logger = logging.getLogger(__name__)


def parse_pdf(path: Path, data: bytes, file_type: str) -> ParsedDocument:
    """Read a PDF's text layer into one section per page, skipping pages that cannot be read."""
    from pypdf import PdfReader  # here, not at the top: commands that read no file (status, search) skip its import

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise ExtractionError("PDF is encrypted with a password, so its text cannot be read.")
        pages = list(reader.pages)
    except ExtractionError:
        raise
    except Exception as exc:  # pypdf raises many types for damaged files
        raise ExtractionError(f"PDF could not be opened: {exc}.") from exc
    sections, warnings = [], []
    for number, page in enumerate(pages, start=1):
        try:
            text = page.extract_text() or ""
        except Exception as exc:  # one damaged page should not cost the others
            logger.debug("page %d of %s failed", number, path, exc_info=True)
            warnings.append(f"Page {number} could not be read ({exc}); it was skipped.")
            continue
        if text.strip():
            sections.append(Section([f"Page {number}"], text.strip(), number, number))
    if not sections and not warnings:
        warnings.append("PDF has no text layer (it may be scanned images); nothing was indexed.")
    return ParsedDocument(file_type=file_type, title=_title(reader) or path.stem, sections=sections, warnings=warnings)


def _title(reader: "PdfReader") -> str | None:
    try:
        title = reader.metadata.title if reader.metadata else None
    except Exception:  # a damaged info dictionary only costs the title
        return None
    return title.strip() if isinstance(title, str) and title.strip() else None
