//! Random-waypoint generator. (Being written.)
