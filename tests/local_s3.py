"""The local S3 of the tests: moto's server (see ``benchmarks._local_s3``, shared with the
scale-out benchmark)."""

from benchmarks._local_s3 import moto_server, new_bucket, object_names, s3_env

__all__ = ["moto_server", "new_bucket", "object_names", "s3_env"]
