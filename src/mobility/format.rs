//! Chooses a trace reader or writer from the file name. (Being written.)
