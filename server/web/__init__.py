"""The web page on ``lode serve``: search, a chunk in its file, projects (``GET /``).

Page shells and static files are public and hold no data; the page fetches HTML
fragments under ``/ui/fragments/`` and calls the JSON API with the API key, asked once
and kept in the browser tab's session. ``/api/docs`` (Swagger UI from the ``swagger-ui-py``
package, served by lode itself) works the same way.
"""

from server.web._docs import docs_routes
from server.web._routes import page_routes

__all__ = ["web_routes"]

web_routes = [*page_routes, *docs_routes]
