# mitmproxy addon for remixproxy's benchmark: the same job as remixproxy's injector (insert one
# bootstrap script after <head>) and the same host mapping as --resolve, so the two proxies are
# compared doing equal work. Configured by environment: BENCH_MAP="host:port=addr:port,...",
# BENCH_TAG_FILE=path of the tag bytes.
import os
from mitmproxy import http

MAP = {}
for entry in filter(None, os.environ.get("BENCH_MAP", "").split(",")):
    k, v = entry.split("=")
    addr, port = v.rsplit(":", 1)
    MAP[k] = (addr, int(port))
with open(os.environ["BENCH_TAG_FILE"], "rb") as f:
    TAG = f.read()


def server_connect(data):
    # Dial the mapped address; SNI and certificate checks still use the host name.
    host, port = data.server.address
    key = "%s:%d" % (host, port)
    if key in MAP:
        data.server.address = MAP[key]


def response(flow: http.HTTPFlow):
    ct = flow.response.headers.get("content-type", "")
    if flow.response.status_code != 200 or not ct.startswith("text/html"):
        return
    body = flow.response.content
    i = body.find(b"<head>")
    if i >= 0:
        i += len(b"<head>")
        flow.response.content = body[:i] + TAG + body[i:]
