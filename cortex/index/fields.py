"""What of a note the lexical index holds: the text of each search field (`index_fields`),
the names a person calls it by (`index_names`), and the two put into an index (`index_note`).
"""

from __future__ import annotations

from cortex.index.bm25 import Index
from cortex.index.builder import IndexBuilder
from cortex.notes.note import Note

__all__ = ["index_fields", "index_names", "index_note"]


def index_fields(note: Note) -> dict[str, str]:
    """The text of each search field. Aliases are titles; tags (frontmatter and body) weigh as headings."""
    return {
        "path": note.path.replace("/", " ").removesuffix(".md"),
        "title": "\n".join((note.title, *note.aliases)),
        "headings": "\n".join((*note.headings, *note.tags)),
        "body": note.body,
    }


def index_names(note: Note) -> list[str]:
    """What a person calls the note: its title, its aliases and its file name."""
    stem = note.path.rsplit("/", 1)[-1].removesuffix(".md")
    return [note.title, *note.aliases, stem]


def index_note(index: Index | IndexBuilder, note: Note) -> None:
    """Add `note` to `index` under its path, by its fields and names."""
    index.add(note.path, index_fields(note), index_names(note))
