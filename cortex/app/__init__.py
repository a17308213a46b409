"""Start-up and assembly: the commands' servers, benches and eval, built from the layers below."""
