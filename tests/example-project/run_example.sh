#!/bin/sh
# The example-project ctest test: install pjemu from the build tree into a temporary prefix,
# configure and build tests/example-project/project against it with find_package(pjemu), and
# run the project's ctest (its scenario must pass; its JUnit and HTML report must exist).
# Usage: run_example.sh CMAKE CTEST BUILD_DIR PROJECT_DIR
set -eu
cmake_bin=$1 ctest_bin=$2 build=$3 project=$4
work=$(mktemp -d "${TMPDIR:-/tmp}/pjemu-example.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$cmake_bin" --install "$build" --prefix "$work/prefix" --component pjemu >/dev/null
test -x "$work/prefix/bin/pjemu"
test -f "$work/prefix/lib/cmake/pjemu/pjemuConfig.cmake"
"$cmake_bin" -S "$project" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix"
"$cmake_bin" --build "$work/build"
cd "$work/build"
"$ctest_bin" --output-on-failure -L example
# One test per scenario file, run by the installed pjemu, with its reports.
"$ctest_bin" -N | grep -q "scenario: worker-retried"
grep -q '<testcase' scenario-reports/worker-retried.xml
grep -q '<svg' scenario-reports/worker-retried.html
echo "example project: PASS"
