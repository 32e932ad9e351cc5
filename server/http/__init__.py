"""The HTTP API as Litestar controllers, one module per resource (``server.app`` lists
them); what every handler takes, the service context, is declared once on the app
(``_common.DEPENDENCIES``), and so are the auth guard and the error handlers. Types in
``schemas``, example payloads in ``examples``; the web page's routes are ``server.web``'s."""
