"""The project routes (the other resources are ``server.http``'s controllers)."""
