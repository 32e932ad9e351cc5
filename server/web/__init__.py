"""The web page on ``lode serve``: search, a chunk in its file, projects (``GET /``).

Page shells and static files are public and hold no data; the page fetches HTML
fragments under ``/ui/fragments/`` and calls the JSON API with the API key, asked once
and kept in the browser tab's session.
"""

from server.web._routes import web_routes

__all__ = ["web_routes"]
