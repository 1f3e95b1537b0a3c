"""Reads `tofu-plan --emit=summary` on stdin and prints the fullest worker's
peak over the mean peak, with and without pool slack (the capacity of
reused buffers beyond their requests, the summary's "of it ... is reused
buffers' capacity ... (mean over workers ...)" line): the fullest worker's
peak less its slack over the mean peak less the mean slack.

    peak 1.104x the mean; without slack 1.078x

Exits with an error when the summary lacks the peak or the slack line."""
import re
import sys

UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
SIZE = r"([0-9.]+) (B|KiB|MiB|GiB|TiB)"


def to_bytes(match, first):
    return float(match.group(first)) * UNITS[match.group(first + 1)]


def main():
    text = sys.stdin.read()
    peak = re.search(r"^peak: +" + SIZE + r" on the fullest worker.*the mean \(" +
                     SIZE + r"\)", text, re.M)
    slack = re.search(r"^ +of it " + SIZE + r" is reused buffers' capacity"
                      r".*\(mean over workers " + SIZE + r"\)", text, re.M)
    if not peak or not slack:
        sys.exit("peak_less_slack.py: no peak or slack line in the summary")
    fullest, mean = to_bytes(peak, 1), to_bytes(peak, 3)
    print("peak %.3fx the mean; without slack %.3fx" %
          (fullest / mean,
           (fullest - to_bytes(slack, 1)) / (mean - to_bytes(slack, 3))))


if __name__ == "__main__":
    main()
