"""The HTTP doors: the trusted MCP doors, the guest door and the owner's console."""
