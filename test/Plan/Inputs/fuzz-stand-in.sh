#!/bin/sh
# A stand-in for tofu-run in mutation-fuzz.test, so that the test sees
# utils/fuzz-plan.py catch each kind of failure: on a plan with a negative
# number it does what $PLANTED says (segv: dies of SIGSEGV; asan: prints a
# sanitizer report and exits 1; hang: sleeps; exit: exits 4); with
# PLANTED=check, a run with --check exits 3 as if its values were wrong;
# on every other input it runs the real tofu-run.
plan=$1
case " $* " in
  *" --check "*) [ "$PLANTED" = check ] && exit 3 ;;
esac
if grep -q -e '-[0-9]' "$plan" 2>/dev/null; then
  case "$PLANTED" in
    segv) kill -SEGV $$ ;;
    asan) echo "==1==ERROR: AddressSanitizer: heap-buffer-overflow" >&2
          exit 1 ;;
    hang) exec sleep 60 ;;
    exit) exit 4 ;;
  esac
fi
exec tofu-run "$@"
