#include "engine/cli/cli.h"

int main(int argc, char** argv) { return kerncast::cli::run(argc, argv); }
