"""The owner's web console: routes, pages, sign-in, and inert Markdown and diffs."""
