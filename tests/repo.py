"""The repository's root folder, for tests that read the project's own files."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
