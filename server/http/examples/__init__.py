"""Every example payload of the OpenAPI document (requests and responses), one module
per group of routes."""
