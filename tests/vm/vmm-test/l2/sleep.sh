#!/bin/sh
# L2 case: never ends by itself (timeout and signal cases).
sleep 100000
