// One of the binary's function orders (src/harness.rs): the same program, linked shuffled.
include!("../main.rs");
