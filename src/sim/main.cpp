// harmonics-sim: placeholder until the simulator lands.
#include <cstdio>
int main() { std::puts("harmonics-sim: not yet built"); return 0; }
