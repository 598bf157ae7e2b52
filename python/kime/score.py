"""kime-score: score a JSON Lines corpus on a dask.distributed cluster (kime.dask).

    kime-score MODEL.kime corpus.jsonl -o scored.jsonl [--scheduler tcp://HOST:PORT | --workers N]
               [--stage bulk] [--trust KEY.pub]... [--errors refused.jsonl] [--ship bytes|path]

With neither --scheduler nor --workers: a local cluster of this machine's cores, one worker
process each. The output is written to a temporary file and renamed when the job is done.
"""
import argparse
import os
import sys

import kime


def _parser():
    p = argparse.ArgumentParser(prog="kime-score", description=__doc__.split("\n\n")[0])
    p.add_argument("model", help="the artifact (.kime)")
    p.add_argument("corpus", help='JSON Lines of {"id", "ids", "markers", "qtype"}')
    p.add_argument("-o", dest="output", required=True, help="the scored records, JSON Lines, in input order")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--scheduler", help="a running scheduler's address, e.g. tcp://10.0.0.5:8786")
    where.add_argument("--workers", type=int, help="a local cluster of N worker processes")
    p.add_argument("--stage", default="bulk", help="the artifact's stage whose buckets pack the records")
    p.add_argument("--trust", action="append", default=[], metavar="KEY.pub",
                   help="load the artifact only if signed by this key (repeatable)")
    p.add_argument("--errors", help="write refused records here ({id, line, message}) and score the rest; "
                                    "without it the first refused record fails the job")
    p.add_argument("--ship", choices=["bytes", "path"], default="bytes",
                   help="send the artifact to every worker once (bytes), or have each read MODEL (shared storage)")
    p.add_argument("--timeout", type=float, default=20, help="seconds to wait for the scheduler")
    p.add_argument("--progress", action="store_true", help="show a progress bar")
    return p


def _client(args):
    from distributed import Client, LocalCluster

    if args.scheduler:
        try:
            return Client(args.scheduler, timeout=args.timeout), None
        except (OSError, TimeoutError) as e:
            raise kime.Error(f"no scheduler answers at {args.scheduler} within {args.timeout:g} s: {e}") from None
    n = args.workers or os.cpu_count() or 1
    cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None)
    return Client(cluster), cluster


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        keys = [open(k).read() for k in args.trust]
        client, cluster = _client(args)
        try:
            import kime.dask

            done, refused = kime.dask.score_jsonl(client, args.model, args.corpus, args.output, stage=args.stage,
                                                  on_error="collect" if args.errors else "raise",
                                                  errors_path=args.errors, trusted_keys=keys, ship=args.ship,
                                                  progress=args.progress)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    except (kime.Error, OSError, ValueError) as e:
        print(f"kime-score: error: {e}", file=sys.stderr)
        return 1
    print(f"kime-score: {done} records scored into {args.output}" +
          (f", {refused} refused (in {args.errors})" if args.errors else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
