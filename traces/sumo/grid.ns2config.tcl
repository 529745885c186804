# set number of nodes
set opt(nn) 30

# set activity file
set opt(af) $opt(config-path)
append opt(af) /grid.ns2activity.tcl

# set mobility file
set opt(mf) $opt(config-path)
append opt(mf) /grid.ns2mobility.tcl

# set start/stop time
set opt(start) 0.0
set opt(stop) 300.0

# set floor size
set opt(x) 601.6
set opt(y) 601.6
set opt(min-x) -1.6
set opt(min-y) -1.6

