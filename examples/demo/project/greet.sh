#!/bin/sh
# Prints a greeting for the name given (default: world).
name=${1:-world}
echo "Helo, $name!"
