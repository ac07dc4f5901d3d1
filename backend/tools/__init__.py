"""Tools a turn can call: workspace files, shell, web fetch, MCP servers."""
