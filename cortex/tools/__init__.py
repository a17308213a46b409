"""The trusted tool functions behind the doors."""
