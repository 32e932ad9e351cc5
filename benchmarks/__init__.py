"""lode's benchmarks: throughput, latency and retrieval quality (run them with ``scripts/bench``)."""
