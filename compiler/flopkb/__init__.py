"""flopkb: compile, validate and publish a knowledge base of LLM-inference performance records."""

__version__ = "0.1.0"
