"""The page-result data model and its writers (JSONL, Markdown, text)."""
