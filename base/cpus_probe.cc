// Prints AvailableCpus() (for cpus_quota_test.sh).

#include <cstdio>

#include "base/cpus.h"

int main() { std::printf("%d\n", ember::AvailableCpus()); }
