"""gitmem seen from other tools: the MCP server, the git-backed memory tool, import and export."""
