// Placeholder entry, replaced by the CLI implementation.
process.stdout.write('slicemesh\n');
