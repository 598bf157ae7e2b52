"""How long opening an artifact takes, plain and with its signature checked, in one run:
    PYTHONPATH=build/python python3 bench/open_time.py MODEL.kime KEY.pub [ROUNDS]
Each round opens the model once each way (alternating, so that both see the same machine) and
releases it; prints the median and the fastest of each, and what checking adds."""
import statistics
import sys
import time

import kime


def main():
    path, key_file = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    key = open(key_file).read()
    ways = (("plain (mapped)", []), ("trusted key (read, hashed, verified)", [key]))
    times = {name: [] for name, _ in ways}
    for _ in range(rounds):
        for name, keys in ways:
            start = time.perf_counter()
            model = kime.Model(path, trusted_keys=keys)
            times[name].append(time.perf_counter() - start)
            del model
    print("| open | median ms | fastest ms |")
    print("| --- | --- | --- |")
    for name, t in times.items():
        print("| %s | %.2f | %.2f |" % (name, 1e3 * statistics.median(t), 1e3 * min(t)))
    plain, trusted = (statistics.median(t) for t in times.values())
    print("checking adds %.2f ms to the median open (%d rounds)" % (1e3 * (trusted - plain), rounds))


if __name__ == "__main__":
    main()
