"""The HTTP API's request and response types, one module per resource: the OpenAPI
document is generated from these (``_fields`` holds what several share)."""
