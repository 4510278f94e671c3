#!/bin/sh
# A ptxas that never finishes: it records its pid in $PID_FILE and sleeps.
echo $$ > "$PID_FILE"
exec sleep 30
