"""Time one attention method at one N with pyperf: worker processes, warm-ups, calibrated loops.

Started by ``python -m benchmarks.run``; by hand, for example::

    python -m benchmarks.timing --method chunked --n 4096 --processes 3 --values 3 -o chunked.json

pyperf re-runs this module in fresh worker processes; each builds the inputs and the method
once (not timed), sets its thread counts, warms up, and then times calls of the method alone.
"""

import pyperf

from benchmarks.methods import METHODS, build, inputs, limit_threads


def add_cmdline_args(cmd, args):
    cmd.extend(("--method", args.method, "--n", str(args.n)))
    if args.block is not None:
        cmd.extend(("--block", str(args.block)))


def main():
    runner = pyperf.Runner(program_args=("-m", "benchmarks.timing"), add_cmdline_args=add_cmdline_args)
    runner.argparser.add_argument("--method", choices=sorted(METHODS), required=True)
    runner.argparser.add_argument("--n", type=int, required=True)
    runner.argparser.add_argument("--block", type=int, help="chunked attention's block size (default: its default)")
    args = runner.parse_args()
    threads = limit_threads(args.method)
    runner.metadata["attention_threads"] = str(threads)
    # the master process only starts the workers: it needs no inputs
    f = build(args.method, *inputs(args.n), block=args.block)[0] if args.worker else (lambda: None)
    name = f"{args.method} N={args.n}" + ("" if args.block is None else f" block={args.block}")
    runner.bench_func(name, f)


if __name__ == "__main__":
    main()
