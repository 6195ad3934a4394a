"""Writes GEOADD commands for a JSONL file of records in Redis's protocol, for `redis-cli --pipe`.

Members are the records' line numbers as 12 digits, the form redis-benchmark's __rand_int__ takes, so a benchmark
can start each request from a different record (FROMMEMBER).

    python3 benchmarks/peers/redis_geoadd.py DATA.jsonl | redis-cli -p PORT --pipe
"""
import sys

import orjson

out = sys.stdout.buffer
for i, line in enumerate(open(sys.argv[1], "rb")):
    r = orjson.loads(line)
    parts = [b"GEOADD", b"pois", repr(r["lon"]).encode(), repr(r["lat"]).encode(), b"%012d" % i]
    out.write(b"*5\r\n" + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts))
