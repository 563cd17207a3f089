"""What stands on the apps and combines them for agents and data subjects: the tool
registry and MCP server, tiered recall, export, import, forgetting across apps, the
Python client and the CLI. No app imports it.
"""
