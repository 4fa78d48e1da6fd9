select count(*) from customers where plan <> 'free';
