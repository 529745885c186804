use linkrev::mobility::ns2;
use linkrev::topology::events::link_timeline;
fn main() {
    for name in std::env::args().skip(1) {
        let f = ns2::read(std::path::Path::new(&name)).unwrap();
        let tl = link_timeline(&f.trace, 250.0);
        let st = linkrev::topology::stats::mobility_stats(&f.trace, &tl);
        let fp = &f.footer.as_ref().unwrap().per_node;
        for r in fp { if st.link_changes_per_node[r.node as usize] as u64 != r.link_changes { println!("node {} ours {} footer {}", r.node, st.link_changes_per_node[r.node as usize], r.link_changes); } }
        println!("duration {} last events {:?}", f.trace.duration, &tl.events[tl.events.len()-2..]);
        println!("first events {:?}", &tl.events[..3]);
    }
}
#[allow(dead_code)]
fn unused() {}
