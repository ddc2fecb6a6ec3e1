module piboot

go 1.26
