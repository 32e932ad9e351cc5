"""HTTP routes, one module per resource (the web page's are ``server.web``'s)."""

from server.routes.content import content_routes
from server.routes.discover import discover_routes
from server.routes.documents import chunk_routes, document_routes
from server.routes.metrics import metrics_routes
from server.routes.outline import outline_routes
from server.routes.projects import project_routes
from server.routes.search import search_routes
from server.routes.service import service_routes
from server.routes.symbols import symbol_routes
from server.routes.tasks import task_routes

__all__ = ["ROUTES"]

ROUTES = [
    *service_routes,
    *project_routes,
    *task_routes,
    *search_routes,
    *document_routes,
    *chunk_routes,
    *outline_routes,
    *symbol_routes,
    *content_routes,
    *discover_routes,
    *metrics_routes,
]
