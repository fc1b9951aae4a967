build-device/cli/gatecheck bench --harness --device cpu --impl torch-eager --impl python:gatecheck.peers:diffusers_eager --seconds-per-property 2
