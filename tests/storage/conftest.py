"""Fixtures of the storage tests: a local S3 server (moto, never AWS)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="module")
def s3_endpoint(request: pytest.FixtureRequest) -> Iterator[str]:
    """A moto S3 server on the loopback for one module, holding the bucket its module names (`BUCKET`)."""
    import boto3
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    client = boto3.session.Session().client(
        "s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="x"
    )
    client.create_bucket(Bucket=request.module.BUCKET)
    yield endpoint
    server.stop()
